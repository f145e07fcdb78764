import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Doorkeeper, type Evaluation } from '@flags/engine';
import { AnswerCache } from '../src/answers.js';

// The answers kept by context (`answerCacheBytes`), on their own; flags-proxy's
// `answer-cache.test.ts` checks what its routes send from them.
describe('answer cache', () => {
  it('admits a key on its second sighting, in memory fixed by the budget', () => {
    const keeper = new Doorkeeper(1 << 16);
    const keys = Array.from(
      { length: 1000 },
      (_, i) => `query enabled proxy 10.0.0.1 /proxy?s=${i}`,
    );
    for (const key of keys) assert.equal(keeper.admit(key), false, key);
    // 1000 keys in 65,536 slots: nearly all are still remembered (a slot holds the latest key).
    const admitted = keys.filter((key) => keeper.admit(key)).length;
    assert.ok(admitted >= 980, `${admitted} of 1000 remembered`);
    // A key that another key pushed out of its slot starts over, however often it was seen.
    const small = new Doorkeeper(2);
    const pushed = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const key of pushed) small.admit(key);
    const remembered = pushed.filter((key) => small.admit(key));
    assert.ok(remembered.length <= 2, `two slots remember at most two keys: ${remembered}`);
    // The cache's doorkeeper takes a sixteenth of its budget, and the answers the rest.
    const cache = new AnswerCache(64 * 1024);
    assert.equal(cache.admits('k'), false);
    assert.equal(cache.admits('k'), true);
    assert.equal(cache.admits('other'), false);
    assert.equal(cache.size, 0);
    const results: Evaluation[] = [];
    for (let i = 0; i < 100; i++)
      cache.set(`key-${i}`, {
        body: Buffer.alloc(1000, i),
        etag: `W/"${i}"`,
        results,
        staleAt: Number.POSITIVE_INFINITY,
      });
    // Each entry costs its 1000-byte body, its key and ~200 bytes: 60 KB hold 50 of them.
    assert.equal(cache.size, 50);
  });

  it('drops the oldest answers beyond its budget, sparing once those asked for since', () => {
    const results: Evaluation[] = [];
    let made = 0;
    // Every answer a body and ETag of its own.
    const answer = (bytes: number, staleAt = Number.POSITIVE_INFINITY) => ({
      body: Buffer.alloc(bytes, ++made),
      etag: `W/"${made}"`,
      results,
      staleAt,
    });
    // Each entry costs its body plus the key and ~200 bytes of bookkeeping.
    const cache = new AnswerCache(4000);
    cache.set('a', answer(700));
    cache.set('b', answer(700));
    cache.set('c', answer(700));
    assert.equal(cache.size, 3);
    assert.ok(cache.get('a')); // a is spared once
    cache.set('d', answer(700));
    assert.equal(cache.size, 4);
    cache.set('e', answer(700)); // over budget: b goes first, then c if needed
    assert.equal(cache.get('b'), undefined);
    assert.ok(cache.get('a'));
    assert.ok(cache.get('e'));
    // One answer may not take more than a quarter of the budget.
    cache.set('huge', answer(1001));
    assert.equal(cache.get('huge'), undefined);
    // A stale answer is dropped when asked for; a fresh one replaces it.
    cache.set('dated', answer(10, Date.now() - 1));
    assert.equal(cache.get('dated'), undefined);
    const fresh = answer(10);
    cache.set('dated', fresh);
    assert.deepEqual(cache.get('dated'), fresh);
    // The cache keeps a copy: the body passed in may be a slab view that is written again.
    fresh.body.fill(0);
    assert.deepEqual(cache.get('dated')?.body, Buffer.alloc(10, made));
  });

  it('keeps one copy of equal bodies, and frees it with the last answer that sends it', () => {
    const results: Evaluation[] = [];
    const answer = (fill: number, etag: string, bytes = 700) => ({
      body: Buffer.alloc(bytes, fill),
      etag,
      results,
      staleAt: Number.POSITIVE_INFINITY,
    });
    // Unshared, the budget holds four 700-byte answers; shared, ten send one body.
    const cache = new AnswerCache(4000);
    for (let i = 0; i < 10; i++) cache.set(`same-${i}`, answer(1, 'W/"same"'));
    assert.equal(cache.size, 10);
    assert.equal(cache.bodyCount, 1);
    const body = cache.get('same-0')?.body;
    for (let i = 1; i < 10; i++) assert.equal(cache.get(`same-${i}`)?.body, body);
    // The same ETag over other bytes (a hash collision) is kept apart with its own body.
    cache.set('collision', answer(2, 'W/"same"'));
    assert.deepEqual(cache.get('collision')?.body, Buffer.alloc(700, 2));
    assert.deepEqual(cache.get('same-3')?.body, Buffer.alloc(700, 1));
    // New bodies push the shared one out once every answer sending it is gone (answers asked for
    // since they were kept are spared once: it takes a second round).
    for (let i = 0; i < 8; i++) cache.set(`other-${i}`, answer(10 + i, `W/"other-${i}"`));
    for (let i = 0; i < 10; i++) assert.equal(cache.get(`same-${i}`), undefined);
    assert.equal(cache.get('collision'), undefined);
    assert.equal(cache.bodyCount, 4);
    assert.equal(cache.size, 4);
  });
});
