/**
 * Shuffle sharding, as upstream's `shufflesharding` package deals it: a flow's hash picks a hand
 * of `handSize` distinct queues out of `deckSize`, so that two flows rarely share their whole
 * hand and one heavy flow can crowd only the queues of its own hand. The hash is upstream's
 * `hashFlowID` (the first 8 bytes of SHA-256 over the schema's name, a zero byte and the flow
 * distinguisher, little-endian), so a flow lands in the same queues as it would upstream.
 */
import { createHash } from 'node:crypto';

/** Upstream's limit on the entropy a hand may need: log2(deckSize) * handSize <= 60. */
const MAX_HASH_BITS = 60;

/** Whether a deck and hand size can be dealt from a 64-bit hash (upstream's ValidateParameters). */
export function validDeal(deckSize: number, handSize: number): boolean {
  if (handSize <= 0 || deckSize <= 0 || handSize > deckSize) return false;
  return Math.log2(deckSize) * handSize <= MAX_HASH_BITS;
}

/** The flow's 64-bit hash (upstream's hashFlowID). */
export function hashFlowId(flowSchemaName: string, distinguisher: string): bigint {
  const digest = createHash('sha256').update(flowSchemaName).update(Buffer.of(0)).update(distinguisher).digest();
  return digest.readBigUInt64LE(0);
}

/**
 * The hand of queue indices `hash` deals: each step takes the remainder of the hash by the
 * cards left and divides it away, then the remainders are turned into distinct cards by
 * skipping over the ones dealt before (upstream's Deal).
 */
export function dealHand(hash: bigint, deckSize: number, handSize: number): number[] {
  const remainders: number[] = [];
  let value = hash;
  for (let i = 0; i < handSize; i++) {
    const cards = BigInt(deckSize - i);
    remainders.push(Number(value % cards));
    value /= cards;
  }
  const hand: number[] = [];
  for (let i = 0; i < handSize; i++) {
    let card = remainders[i]!;
    for (let j = i; j > 0; j--) if (card >= remainders[j - 1]!) card++;
    hand.push(card);
  }
  return hand;
}
