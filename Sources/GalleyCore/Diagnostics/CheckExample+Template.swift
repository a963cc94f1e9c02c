import Foundation

extension CheckExample {
    /// A valid issue: one cover image, one article with an image (`photo-1`) and a sound
    /// (`sound-1`) placed in its body. Every patch example starts from it.
    public static let template: JSONValue = {
        func asset(_ id: String, _ file: String, crop: String) -> JSONValue {
            .object([
                ("id", .string(id)), ("caption", .string("Caption")), ("source", .string("Credit")),
                ("file_name", .string(file)), ("crop_350_350", .string(crop)),
            ])
        }
        let article: JSONValue = .object([
            ("global_id", .string("5f0000000000000000000020")), ("title", .string("Title")),
            ("body", .string("<p>Intro.</p>\n<!-- [ASSET: photo-1] -->\n<p>Listen:</p>\n<!-- [ASSET: sound-1] -->\n")),
            ("description", .string("")), ("url", .string("")), ("section", .string("")),
            ("author_name", .string("")), ("source", .string("")), ("dek", .string("")), ("author_url", .string("")),
            ("author_bio", .string("")), ("keywords", .string("a,b")), ("commentary", .string("")),
            ("type", .string("article")), ("date_last_updated", .string("2020-03-01T00:00:00.000+0000")),
            ("meta", .object([("published", .bool(true))])), ("customMeta", .object([])), ("metadata", .object([])),
            ("images", .object([("ordered", .array([asset("photo-1", "photo-1.jpg", crop: "photo-1-350.jpg")]))])),
            ("sound_files", .object([("ordered", .array([asset("sound-1", "sound-1.mp3", crop: "sound-1.mp3")]))])),
        ])
        return .object([
            ("global_id", .string("5f0000000000000000000010")), ("apple_id", .string("org.example.check")),
            ("title", .string("Check")), ("description", .string("")),
            ("last_updated", .string("2020-03-01T00:00:00.000+0000")), ("display_date", .string("March 2020")),
            ("publish_date", .string("03/01/2020")), ("metadata", .object([])),
            ("images", .object([("ordered", .array([asset("cover", "cover.jpg", crop: "cover.jpg")]))])),
            ("articles", .array([article])),
        ])
    }()

    /// The template itself, as a clean example.
    public static let validManifest = CheckExample.manifest(JSONWriter().encode(template))

    /// The `latest.json` text of a manifest example; `nil` for fixtures.
    public var manifestText: String? {
        func parse(_ text: String) -> JSONValue {
            JSONValue(parsing: text) ?? .string(text)
        }
        func patchArticle(_ transform: (JSONValue) -> JSONValue) -> JSONValue {
            guard case .array(var articles)? = Self.template["articles"] else { return Self.template }
            articles[0] = transform(articles[0])
            return Self.template.setting("articles", .array(articles))
        }
        let writer = JSONWriter()
        switch input {
        case .manifest(let text):
            return text
        case .issue(let key, let value):
            return writer.encode(Self.template.setting(key, value.map(parse)))
        case .article(let key, let value):
            return writer.encode(patchArticle { $0.setting(key, value.map(parse)) })
        case .asset(let key, let value):
            return writer.encode(patchArticle { article in
                guard case .object(let images)? = article["images"], case .array(var ordered)? = JSONValue.object(images)["ordered"]
                else { return article }
                ordered[0] = ordered[0].setting(key, value.map(parse))
                return article.setting("images", .object([("ordered", .array(ordered))]))
            })
        case .body(let html), .render(let html):
            return writer.encode(patchArticle { $0.setting("body", .string(html)) })
        case .fixture, .pack, .validateSource, .importInOrder:
            return nil
        }
    }
}
