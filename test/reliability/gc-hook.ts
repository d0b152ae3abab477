// Test-only preload for the load test's server process (run with --expose-gc): on SIGUSR2, collect garbage fully and print the heap figures.
let n = 0;
process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('gc-hook needs node --expose-gc');
  // Twice: the first pass can leave objects with finalizers (sockets, weak refs) for the second.
  gc();
  gc();
  const m = process.memoryUsage();
  n++;
  process.stdout.write(`${JSON.stringify({ msg: 'gc done', n, heapUsed: m.heapUsed, heapTotal: m.heapTotal, rss: m.rss, external: m.external })}\n`);
});
