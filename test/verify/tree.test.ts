// RFC 9162 hashing and proofs, C2SP tile geometry and paths, and C2SP signed notes, against known answers and the
// in-memory tree: every proof verifies, every altered proof fails.
import { describe, expect, it } from 'vitest';
import { checkpointText, parseCheckpointText } from '../../src/verify/checkpoint.js';
import { keyId, openNote, parsePrivateKey, parseVerifierKey, signNote, signerOf, generatePrivateKey, NoteError } from '../../src/verify/signed-note.js';
import { encodeTileIndex, locateNode, nodeFromTile, parseTilePath, tilePath } from '../../src/verify/tiles.js';
import { consistencyProof, EMPTY_ROOT, inclusionProof, leafHash, memoryNodes, rootAt, verifyConsistency, verifyInclusion } from '../../src/verify/tree.js';

const leaves = (n: number) => Array.from({ length: n }, (_, i) => leafHash(`leaf ${i}`));

describe('RFC 9162 tree', () => {
  it('hashes as RFC 6962/9162 say: the empty tree and the empty leaf', () => {
    expect(EMPTY_ROOT.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(leafHash('').toString('hex')).toBe('6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
  });

  it('verifies every inclusion and consistency proof of trees up to 70 leaves, and refuses altered ones', () => {
    const all = leaves(70);
    const nodes = memoryNodes(all);
    for (let n = 1; n <= 70; n++) {
      const root = rootAt(n, nodes);
      for (let i = 0; i < n; i++) {
        const proof = inclusionProof(i, n, nodes);
        expect(verifyInclusion(i, n, all[i], proof, root)).toBe(true);
        expect(verifyInclusion(i, n, all[(i + 1) % 70], proof, root)).toBe(false);
        if (proof.length) expect(verifyInclusion(i, n, all[i], proof.slice(1), root)).toBe(false);
      }
      for (let m = 1; m <= n; m++) {
        const proof = consistencyProof(m, n, nodes);
        const from = rootAt(m, nodes);
        expect(verifyConsistency(m, n, from, root, proof)).toBe(true);
        if (m < n) {
          expect(verifyConsistency(m, n, leafHash('other'), root, proof)).toBe(false);
          expect(verifyConsistency(m, n, from, root, [...proof.slice(0, -1), leafHash('x')])).toBe(false);
        }
      }
    }
  });
});

describe('C2SP tiles', () => {
  it('encodes and parses tile paths as tlog-tiles writes them', () => {
    expect(encodeTileIndex(1234067)).toBe('x001/x234/067');
    expect(encodeTileIndex(5)).toBe('005');
    expect(tilePath({ level: 0, index: 1234067 })).toBe('tile/0/x001/x234/067');
    expect(tilePath({ level: 1, index: 2 }, 17)).toBe('tile/1/002.p/17');
    expect(parseTilePath('0/x001/x234/067')).toEqual({ tile: { level: 0, index: 1234067 }, width: 256 });
    expect(parseTilePath('1/002.p/17')).toEqual({ tile: { level: 1, index: 2 }, width: 17 });
    for (const bad of ['0/1', '0/x000/001', '0/001.p/256', '0/001.p/0', '0/001.p/017', '99/001', 'entries/001', '0/001/']) expect(parseTilePath(bad)).toBeNull();
  });

  it('finds a perfect subtree in its tile', () => {
    const all = leaves(600);
    const nodes = memoryNodes(all);
    const tile0 = Buffer.concat(all.slice(256, 512));
    expect(locateNode({ height: 3, index: 33 })).toEqual({ tile: { level: 0, index: 1 }, start: 8, count: 8 });
    expect(nodeFromTile({ height: 3, index: 33 }, tile0)).toEqual(nodes.get(3, 33));
    const tile1 = Buffer.concat([nodes.get(8, 0), nodes.get(8, 1)]);
    expect(nodeFromTile({ height: 9, index: 0 }, tile1)).toEqual(nodes.get(9, 0));
    expect(nodeFromTile({ height: 9, index: 1 }, tile1)).toBeNull();
  });
});

describe('C2SP signed notes', () => {
  // The vector of golang.org/x/mod/sumdb/note (the reference implementation of the signed-note format).
  const vkey = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
  const skey = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
  const text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
  const signed = `${text}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

  it('passes the reference verifier-key vector: key id, parsing, signing and opening', () => {
    const v = parseVerifierKey(vkey);
    expect(v.name).toBe('PeterNeumann');
    expect(keyId(v.name, v.publicKey).toString(16)).toBe('c74f20a3');
    expect(v.text).toBe(vkey);
    const s = parsePrivateKey(skey);
    expect(s.verifier.text).toBe(vkey);
    expect(signNote(text, [s])).toBe(signed);
    expect(openNote(signed, [v]).text).toBe(text);
    expect(() => openNote(signed.replace('problem,', 'problem;'), [v])).toThrow(NoteError);
    for (const bad of ['PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==', 'PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW', vkey.replace('c74f20a3', 'c74f20a4')]) {
      expect(() => parseVerifierKey(bad)).toThrow(NoteError);
    }
  });

  it('ignores signatures of unknown keys and refuses a note no known key signed', () => {
    const other = parsePrivateKey(generatePrivateKey('example.test'));
    const both = signNote(text, [parsePrivateKey(skey), other]);
    expect(openNote(both, [other.verifier]).signedBy.map((x) => x.name)).toEqual(['example.test']);
    expect(() => openNote(signed, [other.verifier])).toThrow(/no signature of a known key/);
    expect(() => signerOf('bad name', Buffer.alloc(32))).toThrow(NoteError);
  });

  it('writes and reads tlog-checkpoint bodies', () => {
    const c = { origin: 'example.test/orgs/1', size: 42, root: leafHash('r') };
    expect(checkpointText(c)).toBe(`example.test/orgs/1\n42\n${c.root.toString('base64')}\n`);
    expect(parseCheckpointText(checkpointText(c))).toEqual(c);
    expect(parseCheckpointText(`${checkpointText(c)}extension\n`).size).toBe(42);
    for (const bad of ['a\n01\nAAAA\n', 'a\n1\n', `a\n-1\n${c.root.toString('base64')}\n`, `\n1\n${c.root.toString('base64')}\n`]) expect(() => parseCheckpointText(bad)).toThrow();
  });
});
