import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The Folio app, served by `folio serve` at /app from app/dist (scripts/build-app.ts builds it
 * when its sources changed). No inline script or style ends up in index.html: the server sends a
 * strict Content-Security-Policy with it (src/web-app/routes.ts).
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/app/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    // Every asset is a file: a data: URL inlined into CSS or JS would need a looser policy.
    assetsInlineLimit: 0,
    // On a busy machine (CI runs the build beside the tests) plugin timings are noise, not news.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
});
