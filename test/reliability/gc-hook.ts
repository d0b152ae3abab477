// Test-only preload for the load tests' server processes (run with --expose-gc): on SIGUSR2, collect garbage fully and print the memory figures.
let n = 0;
process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('gc-hook needs node --expose-gc');
  // Twice: the first pass can leave objects with finalizers (sockets, weak refs) for the second.
  gc();
  gc();
  const m = process.memoryUsage();
  n++;
  // maxRss: the peak resident set of the process so far (bytes), which a GC cannot lower.
  const maxRss = process.resourceUsage().maxRSS * 1024;
  process.stdout.write(`${JSON.stringify({ msg: 'gc done', n, heapUsed: m.heapUsed, heapTotal: m.heapTotal, rss: m.rss, external: m.external, maxRss })}\n`);
});
