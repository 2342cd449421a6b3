// PagePositions: where index pages start, and one OFFSET walk for requests of the same page at once.
import { describe, expect, it } from 'vitest';
import { PagePositions } from '../../src/resources/page-positions.js';

describe('PagePositions', () => {
  it('forgets a position once the version changes', () => {
    const positions = new PagePositions();
    positions.remember('users', 'org', 'v1', 100, { value: 'a', id: '1' });
    expect(positions.find('users', 'org', 'v1', 100)).toEqual({ value: 'a', id: '1' });
    expect(positions.find('users', 'org', 'v2', 100)).toBeUndefined();
  });

  it('makes a request for a page being walked to wait for the walk and start where it found', async () => {
    const positions = new PagePositions();
    let release: () => void = () => {};
    const walked = positions.walk('users', 'org', 'v1', 500, async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      positions.remember('users', 'org', 'v1', 500, { value: 'b', id: '2' });
      return ['rows'];
    });
    const waiting = positions.findOrAwait('users', 'org', 'v1', 500);
    const elsewhere = positions.findOrAwait('users', 'org', 'v1', 600);
    expect(await elsewhere).toBeUndefined();
    release();
    expect(await walked).toEqual(['rows']);
    expect(await waiting).toEqual({ value: 'b', id: '2' });
  });

  it('lets a request go on alone when the walk it waited for failed', async () => {
    const positions = new PagePositions();
    const walked = positions.walk('users', 'org', 'v1', 500, async () => {
      throw new Error('connection lost');
    });
    const waiting = positions.findOrAwait('users', 'org', 'v1', 500);
    await expect(walked).rejects.toThrow('connection lost');
    expect(await waiting).toBeUndefined();
  });
});
