// The argument rules of `answer` and `instruct`: strict decisions, a reason only with deny, words joined.
import { describe, expect, it } from 'vitest';
import { answerArgs, instructArgs, MAX_TEXT, UsageError } from '../../../src/control-cli/args.js';

describe('answer arguments', () => {
  it('allow and deny, the reason words joined by spaces (deny only)', () => {
    expect(answerArgs('C1', 'allow', [])).toEqual({ card: 'C1', answer: { option: 'allow' } });
    expect(answerArgs('C1', 'deny', [])).toEqual({ card: 'C1', answer: { option: 'deny' } });
    expect(answerArgs('C1', 'deny', ['not', 'on', 'prod'])).toEqual({ card: 'C1', answer: { option: 'deny', text: 'not on prod' } });
    expect(answerArgs('C1', 'deny', ['not on prod'])).toEqual({ card: 'C1', answer: { option: 'deny', text: 'not on prod' } });
    expect(answerArgs('C1', 'deny', ['  '])).toEqual({ card: 'C1', answer: { option: 'deny' } });
  });

  it.each([['yes'], ['Allow'], ['DENY'], ['once'], ['']])('the second word %j is refused: only allow or deny', (word) => {
    expect(() => answerArgs('C1', word, [])).toThrow(UsageError);
    expect(() => answerArgs('C1', word, [])).toThrow('the second word must be allow or deny');
  });

  it('a reason with allow is refused', () => {
    expect(() => answerArgs('C1', 'allow', ['because'])).toThrow(/a reason goes only with deny/);
  });

  it('a card id must be one printable word', () => {
    for (const bad of ['', 'two words', 'tab\there', 'esc\u001b[31m']) expect(() => answerArgs(bad, 'deny', [])).toThrow(UsageError);
  });

  it('a reason over the bound is refused, without echoing it', () => {
    const long = 'x'.repeat(MAX_TEXT + 1);
    expect(() => answerArgs('C1', 'deny', [long])).toThrow(UsageError);
    try {
      answerArgs('C1', 'deny', [long]);
    } catch (err) {
      expect((err as Error).message).not.toContain('xxxx');
    }
  });
});

describe('instruct arguments', () => {
  it('the words joined by spaces', () => {
    expect(instructArgs('s1', ['run', 'the tests', 'first'])).toEqual({ session: 's1', text: 'run the tests first' });
  });

  it('an empty instruction or session is refused', () => {
    expect(() => instructArgs('s1', [])).toThrow(/must not be empty/);
    expect(() => instructArgs('s1', [' ', ''])).toThrow(/must not be empty/);
    expect(() => instructArgs('', ['x'])).toThrow(/session id must not be empty/);
  });
});
