// The staff app's build (issue 38): Preact through Vite's own JSX transform, one entry, hashed
// assets under /assets/ that the box serves as immutable (src/http/web-app.ts). No plugin that
// downloads anything; the build runs offline at setup (scripts/build-web.mjs).
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2020',
    assetsDir: 'assets',
    sourcemap: false,
    // A phone on the greenhouse wifi: many small files cost more than one more kilobyte.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 200,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/openapi.json': 'http://127.0.0.1:8080' } },
});
