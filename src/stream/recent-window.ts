// One organization's recently delivered frames on this instance: the encoded batches of a contiguous, complete seq range
// ending at the feed's delivered seq, bounded by bytes (oldest dropped first), from which resuming streams are served.
import type { EncodedBatch, FrameFilter, SelectedFrames } from './encoded-batch.js';

interface Held {
  batch: EncodedBatch;
  /** The last seq this batch covers: it holds every streamed event in (previous batch's `through`, through]. */
  through: number;
}

/** The next step of a resume: the frames after a seq, up to and including `through`. */
export interface WindowStep {
  frames: SelectedFrames;
  through: number;
}

const NOTHING = Buffer.alloc(0);

export class RecentWindow {
  /** The window holds every streamed event with a seq in (start, end]. */
  private start = 0;
  private end = 0;
  private readonly held: Held[] = [];
  private bytes = 0;

  /**
   * @param limitBytes the most bytes held (the organization's share of the instance's windows); 0 holds nothing.
   * @param onBytes told of every change of the bytes held (for the instance's gauge).
   */
  constructor(
    private limitBytes: number,
    private readonly onBytes: (delta: number) => void,
  ) {}

  /** Sets the most bytes held, dropping the oldest batches at once if it holds more. */
  setLimit(bytes: number): void {
    this.limitBytes = bytes;
    if (bytes === 0) this.reset(this.end);
    else this.evict();
  }

  /** Bytes held now. */
  get size(): number {
    return this.bytes;
  }

  /** Starts over, empty, at `seq` (the feed's delivered seq when it starts). */
  reset(seq: number): void {
    this.clear();
    this.start = seq;
    this.end = seq;
  }

  /** Drops everything it holds. */
  clear(): void {
    for (const h of this.held) h.batch.onGrow = null;
    this.held.length = 0;
    this.change(-this.bytes);
  }

  /**
   * Extends the window by the range (end, through], just delivered in order with its streamed events in `batch` (null
   * when the range streams none). Ranges must follow each other: one that does not start at `end` starts the window
   * over, so it never claims a range it has not seen whole.
   */
  append(batch: EncodedBatch | null, after: number, through: number): void {
    if (after !== this.end) this.reset(after);
    this.end = through;
    if (batch && batch.count > 0) {
      if (this.limitBytes === 0) {
        // Holding nothing, it covers only its end.
        this.start = through;
        return;
      }
      this.held.push({ batch, through });
      batch.onGrow = (added) => {
        this.change(added);
        this.evict();
      };
      this.change(batch.size);
      this.evict();
    }
  }

  /** True when a stream that has had every event up to `seq` can be served from here, up to `end`. */
  covers(seq: number): boolean {
    return seq >= this.start && seq <= this.end;
  }

  /**
   * For a stream that has had every event up to `seq` (before `end`): the frames after it for its filter (null: none),
   * as far as the next batch held goes. Null when `seq` is not covered (the batches after it have been dropped).
   */
  next(seq: number, filterKey: string, filter: FrameFilter | null): WindowStep | null {
    if (seq < this.start || seq >= this.end) return null;
    // The first batch that ends after seq (batches are in seq order).
    let lo = 0;
    let hi = this.held.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.held[mid].through <= seq) lo = mid + 1;
      else hi = mid;
    }
    // Past the last batch held, the rest of the range streams nothing.
    if (lo === this.held.length) return { frames: { buffer: NOTHING, count: 0 }, through: this.end };
    const h = this.held[lo];
    return { frames: h.batch.after(seq, filterKey, filter), through: h.through };
  }

  /** Drops the oldest batches while over the limit; the window then starts where the last one dropped ended. */
  private evict(): void {
    while (this.bytes > this.limitBytes && this.held.length > 0) {
      const h = this.held.shift()!;
      h.batch.onGrow = null;
      this.start = h.through;
      this.change(-h.batch.size);
    }
  }

  private change(delta: number): void {
    if (delta === 0) return;
    this.bytes += delta;
    this.onBytes(delta);
  }
}
