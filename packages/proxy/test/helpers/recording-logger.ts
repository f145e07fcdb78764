import type { Logger } from '@flags/proxy';

export interface LogLine {
  readonly level: string;
  readonly message: string;
  readonly data: unknown;
}

/** A logger that keeps every line, so tests can assert what was (and was not) logged. */
export class RecordingLogger implements Logger {
  readonly lines: LogLine[] = [];

  private record(level: string, obj: unknown, msg?: string): void {
    this.lines.push({ level, message: msg ?? (typeof obj === 'string' ? obj : ''), data: obj });
  }

  debug(obj: unknown, msg?: string): void {
    this.record('debug', obj, msg);
  }
  info(obj: unknown, msg?: string): void {
    this.record('info', obj, msg);
  }
  warn(obj: unknown, msg?: string): void {
    this.record('warn', obj, msg);
  }
  error(obj: unknown, msg?: string): void {
    this.record('error', obj, msg);
  }
  fatal(obj: unknown, msg?: string): void {
    this.record('fatal', obj, msg);
  }
  isLevelEnabled(): boolean {
    return false;
  }

  text(): string {
    return this.lines
      .map((line) => `${line.level} ${line.message} ${JSON.stringify(line.data)}`)
      .join('\n');
  }
}
