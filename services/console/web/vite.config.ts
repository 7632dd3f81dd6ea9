// Builds the console's web app into ../web-build, which the console service serves (make web).
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  // Workspace packages (@testrun/gen) resolve to their TypeScript sources, as in the services.
  resolve: { conditions: ["source", "browser", "module", "import", "default"] },
  build: {
    outDir: "../web-build",
    emptyOutDir: true,
    // The strict Content-Security-Policy allows no inline script: keep every asset a file.
    assetsInlineLimit: 0,
    // Libraries apart from the app (each under Vite's 500 kB warning, and cached across app releases).
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: "react", test: /node_modules[\\/](react|react-dom|react-router|scheduler)[\\/]/ },
            { name: "rpc", test: /node_modules[\\/](@connectrpc|@bufbuild|@tanstack)[\\/]/ },
            { name: "protos", test: /services[\\/]gen[\\/]/ },
          ],
        },
      },
    },
  },
});
