/// Facts about this build of Galley.
public enum Galley {
    public static let version = "0.1.0"
}
