export const kit = 1;
