/**
 * The worker process asks V8 to favour memory over speed (`--optimize-for-size`). A waiting follow-up's poll
 * allocates garbage seconds later, and by default V8 lets the heap grow to several times what is live before it
 * collects: the flag trades a little CPU per poll for a much smaller peak RSS (docs/BENCHMARKS.md).
 *
 * Set from code because NODE_OPTIONS refuses this flag, so every way of starting the worker gets it. The heap reads
 * it at each collection, which is why setting it after start-up works. It is process-wide, so the library's embedded
 * worker leaves the choice to the process that hosts it (docs/HOW-IT-WORKS.md, "How a follow-up waits, and what it costs").
 */
import { setFlagsFromString } from 'node:v8';

export function preferSmallHeap(): void {
  setFlagsFromString('--optimize-for-size');
}
