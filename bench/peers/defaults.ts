// The peers bench's defaults for measure.ts's settings, for a run of a few minutes. measure.ts reads them
// when it loads, so every peers module that imports it imports this one first.
process.env.BENCH_DATABASE_URL ||= 'postgres://postgres@127.0.0.1:5432/postgres';
process.env.BENCH_CONNECTIONS ||= '8';
process.env.BENCH_DURATION ||= '2.5';
process.env.BENCH_WARM_UP ||= '1';
process.env.BENCH_FIRST_WARM_UP ||= '5';
