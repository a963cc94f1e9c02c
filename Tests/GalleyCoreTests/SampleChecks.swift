@testable import GalleyCore

/// Two checks of GalleyKit's catalogue, declared again with their ids and severities, so that
/// the diagnostics' tests here need no validator (the catalogue's own tests are GalleyKit's).
extension Check {
    static let manifestIdDuplicate = Check("manifest.id-duplicate", .manifest, .error, "Two things share an id.",
                                           explanation: "Ids are Dumpling's primary keys.", triggering: [], clean: [])
    static let mediaSVGMalformed = Check("media.svg-malformed", .media, .warning, "An SVG file is not well-formed XML.",
                                         explanation: "Browsers show an XML error in place of the picture.", triggering: [], clean: [])
}
