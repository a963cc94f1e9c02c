import Foundation

/// JSON for `--json` output: sorted keys, `/` unescaped, one document per run.
func printJSON<T: Encodable>(_ value: T) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return }
    Terminal.standardOutput.write(String(decoding: data, as: UTF8.self) + "\n")
}
