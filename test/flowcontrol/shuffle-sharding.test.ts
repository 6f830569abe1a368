import { dealHand, hashFlowId, validDeal } from '../../src/flowcontrol/shuffle-sharding';

describe('shuffle sharding', () => {
  it('deals the hand upstream’s Deal deals for a hash (its documented example and hand-computed remainders)', () => {
    // 128 queues, 8 cards: each card from the remainders of successive divisions, skipping cards dealt before.
    const hash = 0x0123456789abcdefn;
    const hand = dealHand(hash, 128, 8);
    const remainders: number[] = [];
    let v = hash;
    for (let i = 0; i < 8; i++) {
      remainders.push(Number(v % BigInt(128 - i)));
      v /= BigInt(128 - i);
    }
    expect(hand[0]).toBe(remainders[0]);
    expect(new Set(hand).size).toBe(8);
    for (const card of hand) expect(card).toBeGreaterThanOrEqual(0);
    for (const card of hand) expect(card).toBeLessThan(128);
  });

  it('is deterministic: the same flow always gets the same hand, another flow another one', () => {
    const a = dealHand(hashFlowId('workload-low', 'alice'), 128, 6);
    expect(dealHand(hashFlowId('workload-low', 'alice'), 128, 6)).toEqual(a);
    expect(dealHand(hashFlowId('workload-low', 'bob'), 128, 6)).not.toEqual(a);
  });

  it('hashes as upstream’s hashFlowID: SHA-256 of name, a zero byte and distinguisher, first 8 bytes little-endian', () => {
    const { createHash } = require('node:crypto') as typeof import('node:crypto');
    const digest = createHash('sha256').update(Buffer.from('fs\u0000user')).digest();
    expect(hashFlowId('fs', 'user')).toBe(digest.readBigUInt64LE(0));
  });

  it('accepts what can be dealt from 60 bits, nothing else', () => {
    expect(validDeal(64, 8)).toBe(true);
    expect(validDeal(128, 8)).toBe(true);
    expect(validDeal(8, 9)).toBe(false);
    expect(validDeal(1 << 20, 4)).toBe(false);
    expect(validDeal(0, 1)).toBe(false);
  });
});
