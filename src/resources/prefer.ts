// RFC 7240 `Prefer: return=minimal` / `return=representation`, as RFC 7644 §3.5.2 allows for PATCH.

function preference(header: string): string | undefined {
  return /(?:^|[,;\s])return\s*=\s*"?(minimal|representation)"?/i.exec(header)?.[1]?.toLowerCase();
}

export function prefersMinimal(header: string): boolean {
  return preference(header) === 'minimal';
}

export function prefersRepresentation(header: string): boolean {
  return preference(header) === 'representation';
}
