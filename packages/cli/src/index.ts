export const VERSION_PLACEHOLDER = true;
