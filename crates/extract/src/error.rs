//! The crate's one error type.

/// What building an [`Extractor`](crate::Extractor) and reading a page's images
/// ([`crate::ocr`]) can fail with: extraction itself never fails (hostile markup gives less
/// text, or none).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configured CSS selector (a site's content selector) does not parse.
    #[error("invalid {what} {pattern:?}: {reason}")]
    InvalidPattern {
        what: &'static str,
        pattern: String,
        reason: String,
    },
    /// An image that is not read: not PNG, JPEG, GIF or WebP, over a size limit of
    /// `[crawler.extract.ocr]`, or bytes that do not decode.
    #[error("image refused: {reason}")]
    ImageRefused { reason: String },
    /// A decoded image that does not look like text (a photograph, noise, a blank).
    #[error("image not read: it does not look like text ({reason})")]
    NotText { reason: String },
    /// The OCR program cannot be used.
    #[error(
        "OCR program {program:?} {reason}: install tesseract-ocr and tesseract-ocr-chi-sim, \
         set crawler.extract.ocr.program, or turn OCR off with crawler.extract.ocr.enabled = false"
    )]
    OcrUnavailable { program: String, reason: String },
    /// The OCR engine ran past its time (it was killed).
    #[error("OCR stopped after {after:?}")]
    OcrTimeout { after: std::time::Duration },
    /// The OCR engine failed on an image.
    #[error("OCR failed: {reason}")]
    OcrFailed { reason: String },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
