import Foundation

/// The repository's checkout, for tests that read its files (Package.swift, docs, deploy).
public enum Repository {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}
