/**
 * @vouch/media — scoped media, written once for the gateway and the
 * vision-router: the reads of registered images and their bytes, the base64
 * decoder for `imageBase64`, and the image checker both services hold an
 * image to before anything decodes it further.
 */
export { MEDIA_ITEM_COLUMNS, mediaItemFromRow, mediaReader, mediaTables, type MediaReader, type MediaScope } from './media-reader.js';
export { decodeBase64Image } from './decode-base64.js';
export { checkImage, imageChecker, type CheckedImage, type ImageCheck, type ImageCheckOptions, type ImageChecker, type ImageMime, type ImageSource } from './check-image.js';
export { imageLimitProblem, type ImageHeader, type ImageLimits } from './image-limits.js';
