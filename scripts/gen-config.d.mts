// Types of scripts/gen-config.mjs, for the unit test that runs its check logic.
export interface ConfigArtefact {
  readonly file: string;
  readonly text: string;
}
export type RenderLoader = () => Promise<{ configArtefacts(): ConfigArtefact[] }>;
export const ROOT: string;
export function renderConfigArtefacts(load?: RenderLoader): Promise<ConfigArtefact[]>;
export function diffConfigArtefacts(root?: string, load?: RenderLoader): Promise<string[]>;
export function compareConfigArtefacts(root: string, artefacts: readonly ConfigArtefact[]): string[];
