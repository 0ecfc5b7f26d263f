import { afterAll, describe, expect, it } from 'vitest';
import { closeLexicon, derivationallyRelated, lexicallyRelated, senses } from '../src/lexicon.js';

afterAll(() => closeLexicon());

describe('senses: a lemma\'s common WordNet senses', () => {
  it('gives at most the four most frequent senses, by byte offset in the data file', () => {
    expect(senses('take_down', 'verb')).toEqual([1977139, 1804404, 1665698, 1022943]);
    expect(senses('take', 'verb')).toEqual([2605633, 2272834, 2003830, 1216829]);
    expect(senses('car', 'noun')).toEqual([2961779, 2963378, 2963937, 2963788]);
    expect(senses('lower', 'verb')).toEqual([1977139, 532569, 268741, 1577754]);
  });

  it('reads a phrase or any case as the WordNet lemma', () => {
    expect(senses('take down', 'verb')).toEqual(senses('take_down', 'verb'));
    expect(senses('TAKE  DOWN', 'verb')).toEqual([1977139, 1804404, 1665698, 1022943]);
  });

  it('knows no sense of a word WordNet lacks, nor of the licence text at the head of the index', () => {
    expect(senses('xyzzy', 'verb')).toEqual([]);
    expect(senses('1', 'noun')).toEqual([13764713]);
    expect(senses('princeton', 'verb')).toEqual([]);
  });
});

describe('lexicallyRelated', () => {
  it('relates verbs that share a sense or reach one another within two hypernym steps', () => {
    expect(lexicallyRelated('book', 'reserve', 'verb')).toBe(true); // same synset
    expect(lexicallyRelated('lower', 'take_down', 'verb')).toBe(true); // same synset
    expect(lexicallyRelated('walk', 'move', 'verb')).toBe(true); // walk is a way of moving: one step
    expect(lexicallyRelated('remove', 'delete', 'verb')).toBe(true); // from the hypernym side: one step from delete
    expect(lexicallyRelated('erase', 'remove', 'verb')).toBe(true); // two steps
    expect(lexicallyRelated('move', 'run', 'verb')).toBe(true); // two steps, from the hypernym side
  });

  it('does not relate verbs further apart, nor antonyms', () => {
    expect(lexicallyRelated('deploy', 'move', 'verb')).toBe(false); // three steps
    expect(lexicallyRelated('raise', 'lower', 'verb')).toBe(false);
    expect(lexicallyRelated('delete', 'change', 'verb')).toBe(false);
    expect(lexicallyRelated('restart', 'start', 'verb')).toBe(false);
  });

  it('relates nouns only as synonyms', () => {
    expect(lexicallyRelated('car', 'automobile', 'noun')).toBe(true);
    expect(lexicallyRelated('car', 'vehicle', 'noun')).toBe(false);
    expect(lexicallyRelated('car', 'motor_vehicle', 'noun')).toBe(false);
    expect(lexicallyRelated('staging', 'production', 'noun')).toBe(false);
  });

  it('relates a word to itself, even one WordNet lacks, and an unknown word to nothing else', () => {
    expect(lexicallyRelated('xyzzy', 'xyzzy', 'noun')).toBe(true);
    expect(lexicallyRelated('xyzzy', 'car', 'noun')).toBe(false);
    expect(lexicallyRelated('car', 'xyzzy', 'noun')).toBe(false);
  });

  it('answers each pair alike in either order, whatever was asked before', () => {
    const asked = [
      lexicallyRelated('delete', 'remove', 'verb'),
      lexicallyRelated('remove', 'lower', 'verb'),
      lexicallyRelated('remove', 'delete', 'verb'),
      lexicallyRelated('lower', 'remove', 'verb'),
      lexicallyRelated('take_down', 'lower', 'verb'),
      lexicallyRelated('delete', 'take', 'verb'),
    ];
    expect(asked).toEqual([true, false, true, false, true, false]);
  });
});

describe('derivationallyRelated', () => {
  it('relates a noun and a verb derived from one another in a common sense', () => {
    expect(derivationallyRelated('provision', 'provision')).toBe(true);
    expect(derivationallyRelated('deletion', 'delete')).toBe(true);
    expect(derivationallyRelated('removal', 'remove')).toBe(true);
    expect(derivationallyRelated('reservation', 'reserve')).toBe(true);
    expect(derivationallyRelated('deployment', 'deploy')).toBe(true);
    // Some senses of "book" derive "booking", one derives nothing: one sense is enough.
    expect(derivationallyRelated('booking', 'book')).toBe(true);
  });

  it('does not relate unrelated words, nor a verb and the domain it belongs to', () => {
    expect(derivationallyRelated('car', 'delete')).toBe(false);
    expect(derivationallyRelated('restart', 'restart')).toBe(false);
    expect(derivationallyRelated('provisioning', 'provision')).toBe(false);
    // "erase, delete" is in the domain of recording: a topic, not a derivation.
    expect(derivationallyRelated('recording', 'delete')).toBe(false);
    expect(derivationallyRelated('xyzzy', 'delete')).toBe(false);
    // "engagement" derives from a sense of "book", but not from one of the common senses of "engagement".
    expect(derivationallyRelated('engagement', 'book')).toBe(false);
  });
});
