import { asString } from '../context.js';
import { Doorkeeper, finishHash, HASH_START, hashText } from '../doorkeeper.js';
import type { Context, Evaluation } from '../types.js';

/** Fields a context carries both by name and as a property; the engine reads either (`contextReader`). */
const NAMED_FIELDS: ReadonlySet<string> = new Set([
  'appName',
  'environment',
  'userId',
  'remoteAddress',
]);
/** Rough cost of one kept key besides its characters: the Map slot, the string's header. */
const KEY_OVERHEAD = 64;
/** Key length a generation's room for codes is sized for (a few ids, an address, a few properties). */
const TYPICAL_KEY_LENGTH = 64;
/** At most 1 in 2^this of the keys the doorkeeper admits are kept while the memo is overrun. */
const MAX_SAMPLE_SHIFT = 4;
/** Longest key kept (UTF-16 code units): a context with longer values is evaluated, not kept. */
const MAX_KEY_LENGTH = 1024;
/**
 * The share of the budget the doorkeeper takes (4 bytes a slot). A kept key whose slot another key
 * took since its last sighting is evaluated once more (and its slot taken back), so the slots
 * should far outnumber the keys.
 */
const DOORKEEPER_SHARE = 1 / 8;

/** Starts each value in a key. */
const VALUE_MARK = '\u0001';
/** Stands for a value the context lacks. */
const MISSING_MARK = '\u0002';

/** Whether `value` holds a mark: then two contexts could have equal keys, and none is made. */
function marked(value: string): boolean {
  return value.includes(VALUE_MARK) || value.includes(MISSING_MARK);
}

/**
 * The results of a snapshot's memoizable flags by the context fields they read (`flagReads`): a
 * user who comes back with a new session (a new `sessionId`, the rest as before) gets those flags'
 * results without evaluating them; only the flags that read the session, the clock or chance are
 * evaluated again. Real traffic is mostly contexts never seen before, but of users seen before.
 *
 * A result is kept as its number among its flag's results (`FlagResults.outcomes`), packed in as
 * few bits as that flag needs (two for most), in memory reused for the snapshot's life. A key is
 * kept from its second sighting on (a `Doorkeeper`), so users seen once cost no more than the
 * lookup. Two generations of keys and their codes, each half of the rest of the budget: when the newer is
 * full it becomes the older and the older is dropped, and a key found in the older moves to the
 * newer, so what is asked for stays (a cheap least-recently-used).
 */
export class ResultMemo {
  /** Whether the flag at each snapshot position is kept here. */
  readonly kept: Uint8Array;
  /** Word (within an entry), shift and mask of the `k`th kept flag's code (snapshot order). */
  readonly words: Int32Array;
  readonly shifts: Int32Array;
  readonly masks: Int32Array;
  /** 32-bit words of one entry's codes. */
  private readonly width: number;
  private readonly fields: readonly string[];
  private readonly named: readonly boolean[];
  private readonly capacity: number;
  private readonly generationBytes: number;
  private readonly doorkeeperSlots: number;
  /** Made by the first lookup: a snapshot nobody evaluates with a userId takes no memory. */
  private doorkeeper: Doorkeeper | undefined;
  private newer = new Map<string, number>();
  private older = new Map<string, number>();
  private newerCodes: Uint32Array | undefined;
  private olderCodes: Uint32Array | undefined;
  /** Bytes the newer generation takes: its block of codes and the keys kept so far. */
  private newerBytes: number;
  /** One entry's codes on their way in (`record`, then `store`) or out (`find`). */
  readonly scratch: Uint32Array;
  /** The values of the context `find` looks up, in key order. */
  private readonly values: (string | undefined)[];
  /** The key `find` made last. */
  private key = '';
  /**
   * Keys kept are 1 in 2^sampleShift of those admitted (chosen by their hash, so always the same
   * ones): raised when a generation fills before its entries were found as often as they were
   * kept, when more users come back than it holds and each would push out the next before its
   * return; lowered again when they are found far more often.
   */
  private sampleShift = 0;
  /** Entries `store`d, and lookups served, since the newer generation started. */
  private stored = 0;
  private served = 0;

  /**
   * @param fields the context fields the kept flags read
   * @param outcomes every result each flag can give, by snapshot position; undefined for a flag
   *   that is not kept
   */
  constructor(
    fields: ReadonlySet<string>,
    readonly outcomes: readonly (readonly Evaluation[] | undefined)[],
    budgetBytes: number,
    private readonly maxValueLength: number,
  ) {
    this.fields = [...fields].sort();
    this.named = this.fields.map((field) => NAMED_FIELDS.has(field));
    this.values = new Array(this.fields.length + this.named.filter(Boolean).length).fill(undefined);
    const count = outcomes.filter((list) => list !== undefined).length;
    this.kept = new Uint8Array(outcomes.length);
    this.words = new Int32Array(count);
    this.shifts = new Int32Array(count);
    this.masks = new Int32Array(count);
    let word = 0;
    let bit = 0;
    let k = 0;
    outcomes.forEach((list, position) => {
      if (list === undefined) return;
      this.kept[position] = 1;
      const bits = Math.max(1, Math.ceil(Math.log2(list.length)));
      if (bit + bits > 32) {
        word++;
        bit = 0;
      }
      this.words[k] = word;
      this.shifts[k] = bit;
      this.masks[k] = (1 << bits) - 1;
      bit += bits;
      k++;
    });
    this.width = count === 0 ? 0 : word + 1;
    this.scratch = new Uint32Array(this.width);
    this.doorkeeperSlots = (budgetBytes * DOORKEEPER_SHARE) / 4;
    this.generationBytes = (budgetBytes * (1 - DOORKEEPER_SHARE)) / 2;
    // A generation's codes are one block (counted first); its keys take the rest of its share.
    const entryBytes = 4 * this.width + KEY_OVERHEAD + TYPICAL_KEY_LENGTH;
    this.capacity = Math.max(0, Math.floor(this.generationBytes / entryBytes));
    this.newerBytes = this.codeBytes;
  }

  /** Bytes of a generation's block of codes. */
  private get codeBytes(): number {
    return 4 * this.width * this.capacity;
  }

  /** Whether keeping anything is possible at all (a budget too small, or no flag to keep). */
  get usable(): boolean {
    return this.capacity > 0 && this.width > 0;
  }

  /**
   * Looks `context` up: `found` (its codes are in `scratch`: the `k`th kept flag's is
   * `(scratch[words[k]] >>> shifts[k]) & masks[k]`, its number in `outcomes`), `record` (evaluate,
   * `record` each kept flag's result, then `store`), or `skip` (evaluate, keep nothing).
   *
   * `skip` for a context whose results are not to be kept: without a userId (then the `default`
   * stickiness reads the session), or with one over the value limit, a value holding a mark, too
   * long a key; and for a context the doorkeeper has not seen before, which costs no more than
   * hashing its values: most never come back.
   */
  find(context: Context): 'found' | 'record' | 'skip' {
    const userId = context.userId;
    if (typeof userId !== 'string' || userId === '' || userId.length > this.maxValueLength) {
      return 'skip';
    }
    const values = this.values;
    if (!this.readValues(context)) return 'skip';
    let hash = HASH_START;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      // The marks hashed apart: joined to the value, each would allocate a string.
      hash = hashText(hash, value === undefined ? MISSING_MARK : VALUE_MARK);
      if (value !== undefined) hash = hashText(hash, value);
    }
    this.doorkeeper ??= new Doorkeeper(this.doorkeeperSlots);
    const hashed = finishHash(hash);
    if (!this.doorkeeper.admitHash(hashed)) return 'skip';
    let key = '';
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      key += value === undefined ? MISSING_MARK : VALUE_MARK + value;
    }
    if (key.length > MAX_KEY_LENGTH) return 'skip';
    this.key = key;
    const newer = this.newer.get(key);
    if (newer !== undefined) {
      this.served++;
      this.load(this.newerCodes as Uint32Array, newer);
      return 'found';
    }
    const older = this.older.get(key);
    if (older === undefined) {
      const sampled = this.sampleShift === 0 || hashed >>> (32 - this.sampleShift) === 0;
      return sampled ? 'record' : 'skip';
    }
    this.served++;
    this.load(this.olderCodes as Uint32Array, older);
    this.keep();
    return 'found';
  }

  /**
   * Reads the values the key is made of into `values`: each field the kept flags read, a named
   * one from the context and then from its properties (`contextReader` reads either). False if a
   * value holds a mark.
   */
  private readValues(context: Context): boolean {
    const { fields, named, values } = this;
    const properties = context.properties as Record<string, unknown> | undefined;
    let n = 0;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      if (named[i]) values[n++] = asString((context as Record<string, unknown>)[field]);
      values[n++] = asString(properties?.[field]);
    }
    for (let i = 0; i < n; i++) {
      const value = values[i];
      if (value !== undefined && marked(value)) return false;
    }
    return true;
  }

  /** Notes the `k`th kept flag's result before `store`; false if it is not among its results. */
  record(k: number, position: number, result: Evaluation): boolean {
    const code = (this.outcomes[position] as readonly Evaluation[]).indexOf(result);
    if (code < 0) return false;
    const word = this.words[k]!;
    const shift = this.shifts[k]!;
    if (shift === 0) this.scratch[word] = 0;
    this.scratch[word] = (this.scratch[word] as number) | (code << shift);
    return true;
  }

  /** Keeps the codes `record` noted under the key `find` last made. */
  store(): void {
    this.stored++;
    this.keep();
  }

  /** Keeps the codes in `scratch` under the key `find` last made, in the newer generation. */
  private keep(): void {
    const key = this.key;
    const cost = KEY_OVERHEAD + key.length;
    if (this.newer.size >= this.capacity || this.newerBytes + cost > this.generationBytes) {
      if (this.served < this.stored) {
        this.sampleShift = Math.min(MAX_SAMPLE_SHIFT, this.sampleShift + 1);
      } else if (this.served > 4 * this.stored)
        this.sampleShift = Math.max(0, this.sampleShift - 1);
      this.served = 0;
      this.stored = 0;
      this.older = this.newer;
      this.olderCodes = this.newerCodes;
      this.newer = new Map();
      this.newerCodes = undefined;
      this.newerBytes = this.codeBytes;
    }
    this.newerCodes ??= new Uint32Array(this.capacity * this.width);
    const offset = this.newer.size * this.width;
    this.newerCodes.set(this.scratch, offset);
    this.newer.set(key, offset);
    this.newerBytes += cost;
  }

  private load(codes: Uint32Array, offset: number): void {
    for (let i = 0; i < this.width; i++) this.scratch[i] = codes[offset + i]!;
  }
}
