/**
 * IPv4 and IPv6 addresses and CIDR ranges, parsed by hand (no allocation for IPv4). An address is
 * four 32-bit words; IPv4 uses only the last one. Ranges are parsed at compile time; context
 * addresses per evaluation, by a snapshot's `ContextAddresses`, into a scratch buffer of its own.
 */

export interface IpRange {
  readonly v6: boolean;
  /** Network words (4 for IPv6, 1 for IPv4), already masked. */
  readonly words: Uint32Array;
  readonly masks: Uint32Array;
}

/** The IPv4 address as an unsigned 32-bit number, or -1. */
export function parseIpv4(text: string): number {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 46 /* . */) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else if (code >= 48 && code <= 57 && digits < 3) {
      octet = octet * 10 + (code - 48);
      if (octet > 255) return -1;
      digits++;
    } else {
      return -1;
    }
  }
  if (digits === 0 || dots !== 3) return -1;
  return value * 256 + octet;
}

function hexGroup(text: string): number {
  if (text.length === 0 || text.length > 4) return -1;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = Number.parseInt(text[i]!, 16);
    if (Number.isNaN(digit)) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** 16-bit groups of `text` (an IPv4 tail counts as two), or undefined when it is no group list. */
function groups(text: string): number[] | undefined {
  if (text === '') return [];
  const out: number[] = [];
  const parts = text.split(':');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (i === parts.length - 1 && part.includes('.')) {
      const v4 = parseIpv4(part);
      if (v4 < 0) return undefined;
      out.push(v4 >>> 16, v4 & 0xffff);
    } else {
      const group = hexGroup(part);
      if (group < 0) return undefined;
      out.push(group);
    }
  }
  return out;
}

/** Writes the IPv6 address into `out` (4 words); false when `text` is no IPv6 address. */
export function parseIpv6(text: string, out: Uint32Array): boolean {
  const gap = text.indexOf('::');
  let all: number[];
  if (gap === -1) {
    const list = groups(text);
    if (list === undefined || list.length !== 8) return false;
    all = list;
  } else {
    if (text.indexOf('::', gap + 1) !== -1) return false;
    const head = groups(text.slice(0, gap));
    const tail = groups(text.slice(gap + 2));
    if (head === undefined || tail === undefined || head.length + tail.length > 7) return false;
    all = head.concat(new Array<number>(8 - head.length - tail.length).fill(0), tail);
  }
  for (let w = 0; w < 4; w++) out[w] = ((all[2 * w]! << 16) | all[2 * w + 1]!) >>> 0;
  return true;
}

function maskWords(prefix: number, count: number): Uint32Array {
  const masks = new Uint32Array(count);
  for (let w = 0; w < count; w++) {
    const bits = Math.max(0, Math.min(32, prefix - 32 * w));
    masks[w] = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  }
  return masks;
}

/** `address` or `address/prefix` (IPv4 or IPv6); undefined when malformed. */
export function parseIpRange(text: string): IpRange | undefined {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const prefixText = slash === -1 ? undefined : text.slice(slash + 1);
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const v4 = parseIpv4(address);
  const v6 = v4 < 0;
  const words = new Uint32Array(v6 ? 4 : 1);
  if (v6 && !parseIpv6(address, words)) return undefined;
  if (!v6) words[0] = v4;
  const maxPrefix = v6 ? 128 : 32;
  const prefix = prefixText === undefined ? maxPrefix : Number(prefixText);
  if (prefix > maxPrefix) return undefined;
  const masks = maskWords(prefix, words.length);
  for (let w = 0; w < words.length; w++) words[w] = (words[w]! & masks[w]!) >>> 0;
  return { v6, words, masks };
}

/**
 * Tests context addresses against ranges. The same address is tested by many flags in one
 * evaluation, so the last one parsed is kept; one instance per snapshot (its evaluation state).
 */
export class ContextAddresses {
  /** The IPv6 words of the last address (when `v6`). */
  private readonly words = new Uint32Array(4);
  private text = '';
  /** The IPv4 address of the last address, or -1. */
  private v4 = -1;
  private v6 = false;

  /**
   * Parses a context address into `v4` and (IPv6) `words`. An IPv4-mapped IPv6 address
   * (`::ffff:10.1.2.3`, `::ffff:a01:203`: what a dual-stack socket reports for an IPv4 client) is
   * both: its IPv4 address for IPv4 ranges, itself for IPv6 ones. Without that, listening on `::`
   * would silently turn every IPv4 rule off.
   */
  private parse(text: string): void {
    if (text === this.text) return;
    const words = this.words;
    let v4 = parseIpv4(text);
    const v6 = v4 < 0 && parseIpv6(text, words);
    if (v6 && words[0] === 0 && words[1] === 0 && words[2] === 0xffff) v4 = words[3]!;
    this.v4 = v4;
    this.v6 = v6;
    this.text = text;
  }

  /** Whether the context address `text` lies in any of `ranges`. Allocation-free. */
  inRanges(text: string, ranges: readonly IpRange[]): boolean {
    this.parse(text);
    const v4 = this.v4;
    const v6 = this.v6;
    const words = this.words;
    if (v4 < 0 && !v6) return false;
    for (const range of ranges) {
      if (!range.v6) {
        if (v4 >= 0 && (v4 & range.masks[0]!) >>> 0 === range.words[0]) return true;
        continue;
      }
      if (!v6) continue;
      let inside = true;
      for (let w = 0; w < 4 && inside; w++) {
        inside = (words[w]! & range.masks[w]!) >>> 0 === range.words[w];
      }
      if (inside) return true;
    }
    return false;
  }
}
