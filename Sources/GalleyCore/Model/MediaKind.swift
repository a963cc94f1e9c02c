/// The three kinds of asset Dumpling knows (`videos` is Galley's extension list).
public enum MediaKind: String, Sendable, Codable, CaseIterable {
    case image, sound, video

    /// The manifest list an asset of this kind sits in.
    public var manifestList: String {
        switch self {
        case .image: "images"
        case .sound: "sound_files"
        case .video: "videos"
        }
    }
}
