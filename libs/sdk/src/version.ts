/** This SDK's version, as its package.json states it (a unit test keeps the two equal); sent in the User-Agent. */
export const SDK_VERSION = '0.1.0';
