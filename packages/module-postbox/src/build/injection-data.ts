import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { seededRandom, shuffle } from '@agentinfra/core/testing';
import { z } from 'zod';
import type { ScoringInput } from '../scoring/injection-scorer.js';

/**
 * The labelled mail the local injection model is trained and evaluated on.
 *
 * - BIPIA e-mail (Microsoft, MIT; not in this repository): each e-mail alone
 *   is label 0; each e-mail with one attack instruction inserted at the
 *   start, middle or end of its body is label 1. Train = `email_train.jsonl`
 *   × `text_attack_train.json`, test = `email_test.jsonl` ×
 *   `text_attack_test.json` (the test attack categories do not occur in
 *   training).
 * - `bench/data/postbox-injection-set.json` (written for this project):
 *   ordinary mail and injection attempts of many kinds, split into a
 *   training half and a held-out half by {@link splitLabelledSet}.
 */

/** One labelled message. */
export interface LabelledMail {
  input: ScoringInput;
  /** 1 = injection, 0 = ordinary mail. */
  label: 0 | 1;
  /** Where it came from, for grouping in cross-validation: the e-mail (`bipia:train:12`) or message (`own:57`). */
  group: string;
  /** The attack's BIPIA category, or the labelled set's `kind`. */
  kind: string;
}

/** Seed of the train/held-out split of the labelled set (committed; changing it changes the held-out half). */
export const LABELLED_SET_SEED = 17;

/**
 * The BIPIA directory: `AGENTINFRA_BIPIA_DIR`, else `../shared/datasets/bipia`
 * beside the repository.
 */
export function bipiaDirectory(): string {
  return process.env.AGENTINFRA_BIPIA_DIR ?? fileURLToPath(new URL('../../../../../shared/datasets/bipia', import.meta.url));
}

/** Whether the BIPIA files are there (they are not part of the repository). */
export function bipiaAvailable(directory = bipiaDirectory()): boolean {
  return existsSync(`${directory}/email_test.jsonl`) && existsSync(`${directory}/text_attack_test.json`);
}

/** Path of the labelled set in the repository. */
export function labelledSetFile(): string {
  return fileURLToPath(new URL('../../../../bench/data/postbox-injection-set.json', import.meta.url));
}

/** BIPIA's `context`: `SUBJECT: …|EMAIL_FROM: …|RECEIVED DATE: …|CONTENT: …`, or only the body. */
export function parseBipiaContext(context: string): { subject: string; text: string } {
  const subject = /SUBJECT: ([^|]*)/.exec(context)?.[1]?.trim() ?? '';
  const content = /CONTENT: ([\s\S]*)$/.exec(context)?.[1] ?? context;
  return { subject, text: content };
}

/** Where an attack goes in an e-mail's body. */
export const INSERT_POSITIONS = ['start', 'middle', 'end'] as const;
export type InsertPosition = (typeof INSERT_POSITIONS)[number];

/** Inserts `insert` at the start, middle (the first sentence or line boundary after the middle) or end of `text`. */
export function insertInto(text: string, insert: string, position: InsertPosition): string {
  if (position === 'start') return `${insert}\n${text}`;
  if (position === 'end') return `${text}\n${insert}`;
  const middle = Math.floor(text.length / 2);
  const boundary = text.slice(middle).search(/[.!?\n]\s/);
  const at = boundary === -1 ? middle : middle + boundary + 1;
  return `${text.slice(0, at)} ${insert} ${text.slice(at)}`;
}

/** The e-mails and attack instructions of one BIPIA split. */
export function readBipia(split: 'train' | 'test', directory = bipiaDirectory()) {
  const emails = readFileSync(`${directory}/email_${split}.jsonl`, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => parseBipiaContext(z.object({ context: z.string() }).parse(JSON.parse(line)).context));
  const byCategory = z
    .record(z.string(), z.array(z.string()))
    .parse(JSON.parse(readFileSync(`${directory}/text_attack_${split}.json`, 'utf8')));
  const attacks = Object.entries(byCategory).flatMap(([category, texts]) => texts.map((text) => ({ category, text })));
  return { emails, attacks };
}

/** BIPIA e-mail × attacks of one split: every e-mail alone (label 0), then every e-mail × attack × position (label 1). */
export function bipiaLabelled(split: 'train' | 'test', directory = bipiaDirectory()): LabelledMail[] {
  const { emails, attacks } = readBipia(split, directory);
  const mails: LabelledMail[] = emails.map((email, index) => ({
    input: { ...email, html: null },
    label: 0,
    group: `bipia:${split}:${index}`,
    kind: 'email',
  }));
  emails.forEach((email, index) => {
    for (const attack of attacks) {
      for (const position of INSERT_POSITIONS) {
        mails.push({
          input: { subject: email.subject, text: insertInto(email.text, attack.text, position), html: null },
          label: 1,
          group: `bipia:${split}:${index}`,
          kind: attack.category,
        });
      }
    }
  });
  return mails;
}

const labelledSetSchema = z.object({
  messages: z.array(
    z.object({
      label: z.union([z.literal(0), z.literal(1)]),
      kind: z.string(),
      subject: z.string(),
      text: z.string(),
      html: z.string().optional(),
      /** Shares wording with BIPIA test attacks: never in the training half. */
      always_held_out: z.boolean().optional(),
      /** Added for training after the split was fixed: always in the training half, and left out of the shuffle. */
      training_only: z.boolean().optional(),
    }),
  ),
});

/**
 * The labelled set split in two halves: within each label the messages not
 * marked `training_only` are shuffled with {@link LABELLED_SET_SEED} and the
 * first half (rounded down) of those not marked `always_held_out` trains;
 * the rest, and every message marked `always_held_out`, is held out. Messages
 * marked `training_only` (added later) join the training half after the
 * shuffle, so adding them never moves a message between the halves.
 * @returns both halves, each in label order (0 then 1), training-only messages last.
 */
export function splitLabelledSet(file = labelledSetFile()): { train: LabelledMail[]; heldOut: LabelledMail[] } {
  const { messages } = labelledSetSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  const mails = messages.map((message, index) => ({
    mail: {
      input: { subject: message.subject, text: message.text, html: message.html ?? null },
      label: message.label,
      group: `own:${index}`,
      kind: message.kind,
    } satisfies LabelledMail,
    forced: message.always_held_out === true,
    trainingOnly: message.training_only === true,
  }));
  const random = seededRandom(LABELLED_SET_SEED);
  const train: LabelledMail[] = [];
  const heldOut: LabelledMail[] = [];
  for (const label of [0, 1] as const) {
    const ofLabel = mails.filter((item) => item.mail.label === label && !item.trainingOnly);
    const eligible = ofLabel.filter((item) => !item.forced).map((item) => item.mail);
    shuffle(eligible, random);
    const trainCount = Math.floor(ofLabel.length / 2);
    train.push(...eligible.slice(0, trainCount));
    heldOut.push(...eligible.slice(trainCount), ...ofLabel.filter((item) => item.forced).map((item) => item.mail));
  }
  train.push(...mails.filter((item) => item.trainingOnly).map((item) => item.mail));
  return { train, heldOut };
}
