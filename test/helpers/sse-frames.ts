// Incremental parsing of a server-sent event byte stream into frames, shared by the test SSE clients.

export interface SseFrame {
  id: string | null;
  event: string;
  /** The joined data lines; null for a frame with no data (comments, retry). */
  data: string | null;
  comments: string[];
  retry: number | null;
}

/** Feeds decoded text in; returns the complete frames so far and keeps the partial rest for the next call. */
export function createSseParser() {
  let buf = '';
  return (text: string): SseFrame[] => {
    buf += text;
    const frames: SseFrame[] = [];
    let idx;
    while ((idx = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, idx);
      buf = buf.slice(idx + 2);
      const frame: SseFrame = { id: null, event: 'message', data: null, comments: [], retry: null };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) frame.comments.push(line.slice(1).trim());
        else if (line.startsWith('retry:')) frame.retry = Number(line.slice(6).trim());
        else if (line.startsWith('id:')) frame.id = line.slice(3).trim();
        else if (line.startsWith('event:')) frame.event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) frame.data = data.join('\n');
      frames.push(frame);
    }
    return frames;
  };
}
