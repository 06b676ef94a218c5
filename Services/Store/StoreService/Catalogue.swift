// The ten store items, themed on practice and mastery, cheapest first. Seeded once by the
// `store.v1` migration; a change of price or wording is a new migration, never an edit here
// alone (this list is what v1 inserted). Ids are stable slugs so the CLI can name them.
struct CatalogueItem: Sendable {
    var id: String
    var name: String
    var description: String
    var priceCents: Int
}

enum Catalogue {
    static let items: [CatalogueItem] = [
        CatalogueItem(
            id: "pencil", name: "Sharpened Pencil",
            description: "Where every practice journal starts. Five hours in: you showed up five times.",
            priceCents: 500),
        CatalogueItem(
            id: "notebook", name: "Practice Notebook",
            description: "A plain notebook for what went well and what to try tomorrow.",
            priceCents: 2_000),
        CatalogueItem(
            id: "metronome", name: "Brass Metronome",
            description: "Steady beats for deliberate practice: slow it down until it is right.",
            priceCents: 5_000),
        CatalogueItem(
            id: "hourglass", name: "Hourglass",
            description: "One turn, one focused session. No phone, no tabs, only the work.",
            priceCents: 10_000),
        CatalogueItem(
            id: "reading-lamp", name: "Reading Lamp",
            description: "Warm light for the evenings you keep going after everyone else stopped.",
            priceCents: 25_000),
        CatalogueItem(
            id: "apprentice-apron", name: "Apprentice's Apron",
            description: "Canvas and leather, worn in by hundreds of hours at the bench.",
            priceCents: 50_000),
        CatalogueItem(
            id: "workbench", name: "Oak Workbench",
            description: "A solid place to practise. A thousand hours deserve a proper table.",
            priceCents: 100_000),
        CatalogueItem(
            id: "masters-toolkit", name: "Master's Toolkit",
            description: "Tools that only make sense once you know exactly why you need each one.",
            priceCents: 200_000),
        CatalogueItem(
            id: "studio", name: "Quiet Studio",
            description: "A room of your own for the work. Halfway to ten thousand hours.",
            priceCents: 350_000),
        CatalogueItem(
            id: "golden-laurel", name: "Golden Laurel",
            description: "For the long haul: five thousand hours of showing up, crowned in gold.",
            priceCents: 500_000),
    ]
}
