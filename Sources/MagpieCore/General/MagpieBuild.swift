/// Facts about this build of Magpie.
public enum MagpieBuild {
    /// The release this source tree is, as `magpie --version` and the server's `magpie_build_info` show it.
    public static let version = "0.3.0"
}
