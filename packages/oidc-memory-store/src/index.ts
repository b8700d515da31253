export { SearchableMemoryStore, grantableModels } from './searchable-memory-store.js';
