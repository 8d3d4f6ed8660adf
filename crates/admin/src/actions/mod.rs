//! What a page and the API both do: one function for each operation, called by the page's
//! handler and by the API's, so that the two answer alike and audit alike. Below both: an
//! action knows neither forms' pages nor JSON.

pub(crate) mod candidates;
pub(crate) mod cases;
pub(crate) mod notices;
pub(crate) mod sites;
pub(crate) mod works;
