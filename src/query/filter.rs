//! Which polygons a query may cross, and what each area costs.

use crate::ids::{AreaId, CostVersion, FilterVersion};

/// Area costs and exclusions, with versions so results can be checked at adoption.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryFilter {
    area_costs: [f32; AreaId::MAX as usize + 1],
    excluded_areas: u64,
    use_links: bool,
    version: FilterVersion,
    cost_version: CostVersion,
}

impl Default for QueryFilter {
    fn default() -> Self {
        QueryFilter {
            area_costs: [1.0; AreaId::MAX as usize + 1],
            excluded_areas: 1 << AreaId::UNWALKABLE.0,
            use_links: true,
            version: FilterVersion(1),
            cost_version: CostVersion(1),
        }
    }
}

impl QueryFilter {
    /// Every walkable area at cost 1, links allowed.
    pub fn new() -> Self {
        QueryFilter::default()
    }

    /// Sets an area's cost multiplier (finite, >= 1 keeps the A* heuristic admissible);
    /// bumps the cost version. Returns `false` (and changes nothing) for a bad value.
    pub fn set_area_cost(&mut self, area: AreaId, cost: f32) -> bool {
        if area.0 > AreaId::MAX || !(cost.is_finite() && cost >= 1.0) {
            return false;
        }
        self.area_costs[usize::from(area.0)] = cost;
        self.cost_version = CostVersion(self.cost_version.0 + 1);
        true
    }

    /// Excludes or re-includes an area; bumps the filter version.
    pub fn set_area_excluded(&mut self, area: AreaId, excluded: bool) {
        if area.0 > AreaId::MAX {
            return;
        }
        if excluded {
            self.excluded_areas |= 1 << area.0;
        } else {
            self.excluded_areas &= !(1 << area.0);
        }
        self.version = FilterVersion(self.version.0 + 1);
    }

    /// Allows or forbids off-mesh links; bumps the filter version.
    pub fn set_links_allowed(&mut self, allowed: bool) {
        self.use_links = allowed;
        self.version = FilterVersion(self.version.0 + 1);
    }

    /// Whether polygons of `area` may be entered.
    #[inline]
    pub fn passes(&self, area: u8) -> bool {
        area <= AreaId::MAX && self.excluded_areas & (1 << area) == 0
    }

    /// Cost multiplier of an area.
    #[inline]
    pub fn cost(&self, area: u8) -> f32 {
        self.area_costs[usize::from(area.min(AreaId::MAX))]
    }

    /// Whether off-mesh links may be used.
    pub fn links_allowed(&self) -> bool {
        self.use_links
    }

    /// Version of the include/exclude rules.
    pub fn version(&self) -> FilterVersion {
        self.version
    }

    /// Version of the costs.
    pub fn cost_version(&self) -> CostVersion {
        self.cost_version
    }
}
