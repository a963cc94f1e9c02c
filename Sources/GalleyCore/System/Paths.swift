/// The path from folder `from` to file `to`, both absolute.
package func relativePath(from: String, to: String) -> String {
    let a = from.split(separator: "/")
    let b = to.split(separator: "/")
    var common = 0
    while common < a.count && common < b.count - 1 && a[common] == b[common] { common += 1 }
    let ups = Array(repeating: "..", count: a.count - common)
    return (ups + b[common...].map(String.init)).joined(separator: "/")
}
