import ArgumentParser
import GalleyCore
import GalleyKit

// Closed choices are the library's enums; conforming them here lets `--help` list their values
// and generated shell completions offer them.
extension ReportFormat: ExpressibleByArgument {}
extension RenderStyle: ExpressibleByArgument {}
extension MissingAssetPolicy: ExpressibleByArgument {}
extension MediaKind: ExpressibleByArgument {}
extension ColorMode: ExpressibleByArgument {}
extension ThumbnailMode: ExpressibleByArgument {}
