/**
 * What the CLI does differently on a terminal: colour (only where the stream has colours, so `NO_COLOR`,
 * `FORCE_COLOR` and `TERM=dumb` are honoured by Node's own `hasColors`), and one progress line that updates in place
 * while `send --wait` waits. Piped or redirected output stays plain lines.
 */
import { styleText } from 'node:util';
import type { CliIo } from './io';

type Style = 'red' | 'yellow' | 'green' | 'dim';

/** Whether a stream gets colour: a TTY whose terminal has colours, as Node decides from `env`. */
export function colourFor(
  stream: { isTTY?: boolean; hasColors?: (env?: object) => boolean },
  env: NodeJS.ProcessEnv,
): boolean {
  return stream.isTTY === true && typeof stream.hasColors === 'function' && stream.hasColors(env);
}

/** The text in a style when the CLI's stderr has colour, else as it is. */
export function paint(io: Pick<CliIo, 'colour'>, style: Style | undefined, text: string): string {
  if (!io.colour || style === undefined) return text;
  // Node 22+ checks a stream itself (stdout by default); the CLI has decided already, for stderr.
  return (styleText as (format: Style, text: string, options?: { validateStream?: boolean }) => string)(style, text, {
    validateStream: false,
  });
}

const CLEAR_LINE = '\r\x1b[2K';

/**
 * Progress while waiting: on a terminal one line, rewritten in place (and cut to the terminal's width, since a wrapped
 * line cannot be cleared); elsewhere one line per change. Other messages go above it.
 */
export class ProgressLine {
  private shown = false;

  constructor(private readonly io: CliIo) {}

  /** Shows the parts: each on a line of its own when piped; on a terminal, in one line, cut to its width. */
  update(parts: ReadonlyArray<{ text: string; style?: Style }>): void {
    if (!this.io.tty) {
      for (const part of parts) this.io.err(`${paint(this.io, part.style, part.text)}\n`);
      return;
    }
    // Cut by what shows, before colouring: a colour code takes no room, and a cut through one would leave it on.
    let room = (this.io.columns ?? 80) - 1;
    const shown: string[] = [];
    for (const [index, part] of parts.entries()) {
      const text = index === 0 ? part.text : `  ${part.text.trimStart()}`;
      if (text.length >= room) {
        shown.push(paint(this.io, part.style, `${text.slice(0, Math.max(room - 1, 0))}…`));
        break;
      }
      shown.push(paint(this.io, part.style, text));
      room -= text.length;
    }
    this.io.err(`${CLEAR_LINE}${shown.join('')}`);
    this.shown = true;
  }

  /** A message of its own (a warning): on its own line, with the progress line redrawn under it by the next update. */
  say(text: string): void {
    this.end();
    this.io.err(`${text}\n`);
  }

  /** Leaves the last progress line as it stands, so what follows starts on a line of its own. */
  end(): void {
    if (!this.shown) return;
    this.io.err('\n');
    this.shown = false;
  }
}
