/** A logistic model over the features of `injection-features.ts`: score = sigmoid(bias + Σ weight·feature). */
export interface LinearModel {
  /** Name and version, reported as the scorer id. */
  id: string;
  bias: number;
  /** One weight per feature, in `FEATURE_NAMES` order. */
  weights: readonly number[];
}

/**
 * The bundled model, fitted by `npx tsx bench/injection-eval.ts --fit` on the
 * training splits only (BIPIA e-mail train × train attacks, and the even half
 * of bench/data/postbox-injection-set.json): logistic regression with weights
 * kept non-negative and pulled towards hand-set priors, ordinary mail counted
 * three times (a false quarantine costs more than a missed off-task request).
 * Feature order: override, model_address, role_marker, output_direction,
 * task_opening, question, first_person_request, transformation,
 * tool_or_exfiltration, lure, hidden_instructions, invisible_chars,
 * tag_chars, hidden_elements, text_comments, encoded_texts,
 * mismatched_links, trick_links, markdown_exfil, instruction_share.
 */
export const LOCAL_SCORER_MODEL: LinearModel = {
  id: 'local-v1',
  bias: -2.876,
  weights: [4.54, 3.633, 5.417, 5.429, 1.254, 0.757, 0.709, 3.549, 1.625, 0, 5.478, 0.5, 4.277, 1.481, 0.5, 3.683, 3.946, 4.446, 3, 3.452],
};
