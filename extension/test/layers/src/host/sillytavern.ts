export const host = 1;
