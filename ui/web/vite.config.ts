import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// Built files go to ../dist (ui/dist), embedded into the Go binary by
// ui/embed.go. Hashed assets live under dist/assets (served immutable).
export default defineConfig({
  plugins: [svelte()],
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    reportCompressedSize: true,
  },
  // `npm run dev` proxies the API to a running Hearth (HEARTH_URL, default :8080).
  server: {
    proxy: {
      '/api': process.env.HEARTH_URL ?? 'http://127.0.0.1:8080',
      // The admin panel's connection settings live outside /api (COMPAT §6.1).
      '/openai': process.env.HEARTH_URL ?? 'http://127.0.0.1:8080',
      '/ollama': process.env.HEARTH_URL ?? 'http://127.0.0.1:8080',
      '/ws': { target: (process.env.HEARTH_URL ?? 'http://127.0.0.1:8080').replace(/^http/, 'ws'), ws: true },
    },
  },
  // Tests mount components in happy-dom: use Svelte's browser build.
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
