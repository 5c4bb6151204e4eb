export { srgbToLab, srgbToLinear, hueAngle, chroma, imageToLab, luminance, type Lab, type LabPlanes } from './colour.js';
export { greyWorld, applyGains, type WhiteBalance, type WhiteBalanceOptions } from './white-balance.js';
export { resizeArea, fitLongSide } from './resize.js';
export { labelComponents, distanceTransform, type Component, type Labelling } from './components.js';
export { boxMean, localStdDev, localDetrendedStdDev, erode, dilate, open, close, majority } from './filters.js';
export { cloneImage, fillRect, strokeRect, drawText, drawLabel, textWidth, TEXT_HEIGHT, type Rgb } from './draw.js';
export { glyph, hasGlyph, GLYPH_WIDTH, GLYPH_HEIGHT } from './font.js';
