import { COMMERCE_CASES } from './cases-commerce.js';
import { HELD_OUT } from './cases-held-out.js';
import { BLIND_3 } from './cases-blind-3.js';
import { BLIND_4 } from './cases-blind-4.js';
import { BLIND_5 } from './cases-blind-5.js';
import { HELD_OUT_2 } from './cases-held-out-2.js';
import { LOGISTICS_CASES } from './cases-logistics.js';
import { OPERATIONS_CASES } from './cases-operations.js';
import { SERVICES_CASES } from './cases-services.js';
import type { CriticCase } from './corpus-case.js';

/** The cases the critic was built against. */
export const TUNING_CASES: CriticCase[] = [...COMMERCE_CASES, ...OPERATIONS_CASES, ...LOGISTICS_CASES, ...SERVICES_CASES];

/** Cases written after the critic was built, and never tuned on: reported apart. */
export const HELD_OUT_CASES: CriticCase[] = HELD_OUT;

/** A second held-out part, written after the fixes the first one prompted: never tuned on. */
export const HELD_OUT_2_CASES: CriticCase[] = HELD_OUT_2;

/** The blind set of issue 16 (13+ domains the corpus does not use), written before the judge changed: reported apart. */
export const BLIND_3_CASES: CriticCase[] = BLIND_3;

/** The second blind set of issue 16 (14 more new domains), written by a reviewer who did not read the judge, after its last change: reported apart. */
export const BLIND_4_CASES: CriticCase[] = BLIND_4;

/**
 * The third blind set of issue 16 (13 more new domains), written at be0b77c by
 * a reviewer who read neither the judge nor any bench output about earlier
 * sets, and measured once there before the judge changed
 * (docs/evaluation/issue-16-blind-5-before.md). Not part of the tuning corpus:
 * reported apart.
 */
export const BLIND_5_CASES: CriticCase[] = BLIND_5;
