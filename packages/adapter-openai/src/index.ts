export { createOpenAiEmbedder, type OpenAiEmbedder, type OpenAiEmbedderOptions } from './openai-embedder.js';
