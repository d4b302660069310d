// The main area's views, one Preact component per tab kind (issue 15). The shell renders
// TAB_VIEWS[tab.kind] with { tab, active }; each view fetches its own state over REST,
// follows /ws through live.js and refetches on a resync.
import { ScenarioView, HelperView, CollectionView } from "./launch.js";
import { RunView } from "./run.js";
import { CollectionRunView } from "./collection_run.js";

export const TAB_VIEWS = {
  scenario: ScenarioView,
  helper: HelperView,
  collection: CollectionView,
  "scenario-run": RunView,
  "collection-run": CollectionRunView,
};
