import { afterAll } from 'vitest';
import { dropTestSchemas } from './build-app.js';

// Each test file's PostgreSQL schemas go when the file is done.
afterAll(dropTestSchemas);
