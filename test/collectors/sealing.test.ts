// Job sealing (collector protocol): the jobs of one lease answer share one ephemeral key (collectors-bench, #27), yet
// each opens on its own, only with the collector's own key pair, and only as sealed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateCollectorKeys, openSealed, sealTo, sealerTo, type Sealed } from '../../src/lib/collector-protocol';

const a = generateCollectorKeys();
const b = generateCollectorKeys();
const open = (k: typeof a, s: Sealed) => openSealed(k.sealing_private, k.sealing_public, s);

test('one sealer: each value opens to itself, with one ephemeral key and its own IV', () => {
  const seal = sealerTo(a.sealing_public);
  const values = [{ target: { password: 'one' } }, { target: { password: 'two' } }, { target: { password: 'three' } }];
  const sealed = values.map((v) => seal(v));
  assert.equal(new Set(sealed.map((s) => s.epk)).size, 1, 'one key agreement for the answer');
  assert.equal(new Set(sealed.map((s) => s.iv)).size, 3, 'a fresh IV per value');
  sealed.forEach((s, i) => assert.deepEqual(open(a, s), values[i]));
  // Opened twice: the second time from the site's cached opening key, the same value.
  assert.deepEqual(open(a, sealed[1]), values[1]);
  assert.ok(!JSON.stringify(sealed).includes('two'), 'nothing in clear');
});

test('another collector cannot open a job, even after its own collector opened (and cached) that ephemeral key', () => {
  const sealed = sealerTo(a.sealing_public)({ secret: 'x' });
  assert.deepEqual(open(a, sealed), { secret: 'x' });
  assert.throws(() => open(b, sealed));
  // The right public key with another private key: not the cached opening key either.
  assert.throws(() => openSealed(b.sealing_private, a.sealing_public, sealed));
});

test('a job changed on the way fails, whichever part: ciphertext, tag, IV, or another job of the same answer', () => {
  const seal = sealerTo(a.sealing_public);
  const one = seal({ n: 1 });
  const two = seal({ n: 2 });
  assert.deepEqual(open(a, one), { n: 1 });
  const flip = (b64: string) => {
    const buf = Buffer.from(b64, 'base64');
    buf[0] ^= 1;
    return buf.toString('base64');
  };
  assert.throws(() => open(a, { ...one, ct: flip(one.ct) }));
  assert.throws(() => open(a, { ...one, tag: flip(one.tag) }));
  assert.throws(() => open(a, { ...one, iv: two.iv }), 'the IV of another job');
  assert.throws(() => open(a, { ...one, ct: two.ct }), 'the ciphertext of another job');
  assert.deepEqual(open(a, sealTo(a.sealing_public, { n: 3 })), { n: 3 }, 'sealTo: a sealer of its own');
});
