import { createLocalInjectionScorer, type LocalInjectionScorer } from './local-scorer.js';

/** A {@link LocalInjectionScorer} whose model is read on first use, or earlier by `load`. */
export interface DeferredLocalScorer extends LocalInjectionScorer {
  /** Builds the scorer now (reads and decodes the model: about 0.1 s of CPU for the bundled one) unless it was built already. */
  load(): void;
}

/**
 * The bundled local scorer (`createLocalInjectionScorer`), built when it is
 * first used (its `id` read included) or `load`ed: a postbox service created
 * for a CLI command or a test that scores nothing never reads the model,
 * while a server `load`s it at start so that its first message is not slower.
 * @throws (from the first use or `load`) what `createLocalInjectionScorer` throws for an unreadable model file.
 */
export function deferredLocalScorer(create: () => LocalInjectionScorer = createLocalInjectionScorer): DeferredLocalScorer {
  let scorer: LocalInjectionScorer | undefined;
  const built = () => {
    scorer ??= create();
    return scorer;
  };
  return {
    get id() {
      return built().id;
    },
    scoreSync: (input) => built().scoreSync(input),
    explain: (input) => built().explain(input),
    score: (input) => built().score(input),
    load: () => void built(),
  };
}
