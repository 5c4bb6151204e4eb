#!/usr/bin/env node
// The `cropwalk` command (package.json "bin"): loads the TypeScript of scripts/cropwalk.ts
// through tsx, as `npm start` does for the service.
import { register } from 'tsx/esm/api';

register();
await import('./cropwalk.ts');
