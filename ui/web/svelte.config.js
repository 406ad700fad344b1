// Svelte 5 strips TypeScript in <script lang="ts"> natively; no preprocessor needed.
export default {};
