//! The scene graph: meshes, transform nodes, instances, and the epochs their versions come
//! from.
//!
//! Versions are derived, not stored: every mutation stamps what it touched with the next
//! value of one scene-wide epoch counter, and an instance's [`SourceVersion`] is the newest
//! stamp along its chain (mesh, its own record, each ancestor node). So it changes exactly
//! when something the instance's world triangles depend on changes, never collides, and
//! orders by age.

use std::collections::HashMap;

use glam::Affine3A;

use super::error::GeometryError;
use super::mesh::TriMesh;
use crate::ids::{MeshVersion, SourceVersion, SupportId, TransformVersion};

/// Index of a mesh in its [`Scene`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MeshId(pub u32);

/// Index of a transform node in its [`Scene`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// Index of an instance in its [`Scene`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstanceId(pub u32);

/// Deepest ancestor chain followed; a longer chain is refused as a cycle. Scenes this deep
/// are not authored by hand, and the limit bounds the per-instance walk.
pub const NODE_DEPTH_MAX: usize = 256;

#[derive(Clone, Debug)]
struct MeshEntry {
    mesh: TriMesh,
    changed_at: u64,
}

#[derive(Clone, Debug)]
struct NodeEntry {
    name: String,
    parent: Option<NodeId>,
    local: Affine3A,
    changed_at: u64,
}

/// How to place a mesh in the scene.
#[derive(Clone, Debug)]
pub struct InstanceDesc {
    /// Name used in errors and reports.
    pub name: String,
    /// The mesh placed.
    pub mesh: MeshId,
    /// The node this instance hangs under (`None`: the world root).
    pub parent: Option<NodeId>,
    /// Transform from the mesh's metres to the parent's space.
    pub local: Affine3A,
    /// Moving support this geometry belongs to (`None`: static ground).
    pub support: Option<SupportId>,
}

impl InstanceDesc {
    /// An instance of `mesh` at the world root with the identity transform.
    pub fn new(name: impl Into<String>, mesh: MeshId) -> Self {
        InstanceDesc {
            name: name.into(),
            mesh,
            parent: None,
            local: Affine3A::IDENTITY,
            support: None,
        }
    }

    /// Hangs the instance under `parent`.
    pub fn under(mut self, parent: NodeId) -> Self {
        self.parent = Some(parent);
        self
    }

    /// Sets the local transform.
    pub fn with_local(mut self, local: Affine3A) -> Self {
        self.local = local;
        self
    }

    /// Marks the geometry as riding on a moving support.
    pub fn on_support(mut self, support: SupportId) -> Self {
        self.support = Some(support);
        self
    }
}

/// A placed mesh, as stored in the scene.
#[derive(Clone, Debug)]
pub struct Instance {
    /// What was asked for.
    pub desc: InstanceDesc,
    changed_at: u64,
}

/// Meshes, a tree of transform nodes, and instances placing meshes under nodes.
#[derive(Clone, Debug, Default)]
pub struct Scene {
    meshes: Vec<MeshEntry>,
    nodes: Vec<NodeEntry>,
    instances: Vec<Instance>,
    supports: Vec<String>,
    support_by_name: HashMap<String, SupportId>,
    epoch: u64,
}

impl Scene {
    /// An empty scene.
    pub fn new() -> Self {
        Scene::default()
    }

    fn next_epoch(&mut self) -> u64 {
        self.epoch += 1;
        self.epoch
    }

    /// Adds a mesh.
    pub fn add_mesh(&mut self, mesh: TriMesh) -> MeshId {
        let changed_at = self.next_epoch();
        self.meshes.push(MeshEntry { mesh, changed_at });
        MeshId(self.meshes.len() as u32 - 1)
    }

    /// Adds a transform node under `parent` (`None`: the world root).
    pub fn add_node(
        &mut self,
        name: impl Into<String>,
        parent: Option<NodeId>,
        local: Affine3A,
    ) -> Result<NodeId, GeometryError> {
        if let Some(parent) = parent {
            self.check_node(parent)?;
        }
        let changed_at = self.next_epoch();
        self.nodes.push(NodeEntry {
            name: name.into(),
            parent,
            local,
            changed_at,
        });
        Ok(NodeId(self.nodes.len() as u32 - 1))
    }

    /// Adds an instance.
    pub fn add_instance(&mut self, desc: InstanceDesc) -> Result<InstanceId, GeometryError> {
        self.check_mesh(desc.mesh)?;
        if let Some(parent) = desc.parent {
            self.check_node(parent)?;
        }
        let changed_at = self.next_epoch();
        self.instances.push(Instance { desc, changed_at });
        Ok(InstanceId(self.instances.len() as u32 - 1))
    }

    /// Adds `mesh` and one instance of it at the world root, named after the mesh: how the
    /// generated levels place their pieces (each already in world metres). The instance
    /// cannot be refused: its mesh was just added and it has no parent.
    #[cfg(feature = "harness")]
    pub(crate) fn add_placed(&mut self, mesh: TriMesh) -> InstanceId {
        let name = mesh.name.clone();
        let id = self.add_mesh(mesh);
        self.add_instance(InstanceDesc::new(name, id))
            .expect("a new mesh's instance at the root is valid")
    }

    /// The support id for a name, interned on first use.
    pub fn support(&mut self, name: &str) -> SupportId {
        if let Some(&id) = self.support_by_name.get(name) {
            return id;
        }
        let id = SupportId(self.supports.len() as u32);
        self.supports.push(name.to_owned());
        self.support_by_name.insert(name.to_owned(), id);
        id
    }

    /// Name of a support id, if it was interned here.
    pub fn support_name(&self, support: SupportId) -> Option<&str> {
        self.supports.get(support.0 as usize).map(String::as_str)
    }

    /// Replaces a node's local transform: every instance under it gets a new source version.
    pub fn set_node_transform(
        &mut self,
        node: NodeId,
        local: Affine3A,
    ) -> Result<(), GeometryError> {
        self.check_node(node)?;
        let changed_at = self.next_epoch();
        let entry = &mut self.nodes[node.0 as usize];
        entry.local = local;
        entry.changed_at = changed_at;
        Ok(())
    }

    /// Moves a node under another parent, refusing cycles.
    pub fn set_node_parent(
        &mut self,
        node: NodeId,
        parent: Option<NodeId>,
    ) -> Result<(), GeometryError> {
        self.check_node(node)?;
        if let Some(parent) = parent {
            self.check_node(parent)?;
            let makes_cycle = parent == node || self.ancestors(Some(parent)).any(|id| id == node);
            if makes_cycle {
                return Err(GeometryError::Cycle {
                    node: node.0,
                    parent: parent.0,
                });
            }
        }
        let changed_at = self.next_epoch();
        let entry = &mut self.nodes[node.0 as usize];
        entry.parent = parent;
        entry.changed_at = changed_at;
        Ok(())
    }

    /// Replaces an instance's local transform.
    pub fn set_instance_transform(
        &mut self,
        instance: InstanceId,
        local: Affine3A,
    ) -> Result<(), GeometryError> {
        self.check_instance(instance)?;
        let changed_at = self.next_epoch();
        let entry = &mut self.instances[instance.0 as usize];
        entry.desc.local = local;
        entry.changed_at = changed_at;
        Ok(())
    }

    /// Replaces a mesh's content: every instance of it gets a new source version.
    pub fn set_mesh(&mut self, id: MeshId, mesh: TriMesh) -> Result<(), GeometryError> {
        self.check_mesh(id)?;
        let changed_at = self.next_epoch();
        self.meshes[id.0 as usize] = MeshEntry { mesh, changed_at };
        Ok(())
    }

    /// The meshes, in id order.
    pub fn meshes(&self) -> impl ExactSizeIterator<Item = &TriMesh> {
        self.meshes.iter().map(|entry| &entry.mesh)
    }

    /// A mesh by id.
    pub fn mesh(&self, id: MeshId) -> Option<&TriMesh> {
        self.meshes.get(id.0 as usize).map(|entry| &entry.mesh)
    }

    /// The instances, in id order.
    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }

    /// The first instance with this name.
    pub fn instance_by_name(&self, name: &str) -> Option<InstanceId> {
        self.instances
            .iter()
            .position(|instance| instance.desc.name == name)
            .map(|index| InstanceId(index as u32))
    }

    /// Name of a node.
    pub fn node_name(&self, node: NodeId) -> Option<&str> {
        self.nodes
            .get(node.0 as usize)
            .map(|entry| entry.name.as_str())
    }

    /// Version of a mesh's content.
    pub fn mesh_version(&self, id: MeshId) -> Option<MeshVersion> {
        self.meshes
            .get(id.0 as usize)
            .map(|entry| MeshVersion(entry.changed_at))
    }

    /// Version of a node's own transform and parent link.
    pub fn node_version(&self, id: NodeId) -> Option<TransformVersion> {
        self.nodes
            .get(id.0 as usize)
            .map(|entry| TransformVersion(entry.changed_at))
    }

    /// The source version of an instance: the newest change among its mesh, its own record
    /// and every ancestor node.
    pub fn source_version(&self, id: InstanceId) -> Option<SourceVersion> {
        let instance = self.instances.get(id.0 as usize)?;
        let mesh = self.meshes[instance.desc.mesh.0 as usize].changed_at;
        let newest = self
            .ancestors(instance.desc.parent)
            .map(|node| self.nodes[node.0 as usize].changed_at)
            .fold(instance.changed_at.max(mesh), u64::max);
        Some(SourceVersion(newest))
    }

    /// The full world transform of an instance: every ancestor (root first), then its local
    /// transform.
    pub fn world_transform(&self, id: InstanceId) -> Option<Affine3A> {
        let instance = self.instances.get(id.0 as usize)?;
        let mut chain: Vec<&Affine3A> = self
            .ancestors(instance.desc.parent)
            .map(|node| &self.nodes[node.0 as usize].local)
            .collect();
        chain.reverse();
        Some(crate::geom::transform::compose(chain, instance.desc.local))
    }

    /// The first ancestor node (nearest first) whose transform is not finite.
    pub(super) fn non_finite_ancestor(&self, id: InstanceId) -> Option<NodeId> {
        let instance = &self.instances[id.0 as usize];
        self.ancestors(instance.desc.parent)
            .find(|node| !crate::geom::transform::is_finite(&self.nodes[node.0 as usize].local))
    }

    /// Walks from `start` to the root, nearest first, at most [`NODE_DEPTH_MAX`] nodes.
    fn ancestors(&self, start: Option<NodeId>) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(start, |node| self.nodes[node.0 as usize].parent).take(NODE_DEPTH_MAX)
    }

    fn check_mesh(&self, id: MeshId) -> Result<(), GeometryError> {
        match self.meshes.get(id.0 as usize) {
            Some(_) => Ok(()),
            None => Err(GeometryError::UnknownId {
                kind: "mesh",
                index: id.0,
            }),
        }
    }

    fn check_node(&self, id: NodeId) -> Result<(), GeometryError> {
        match self.nodes.get(id.0 as usize) {
            Some(_) => Ok(()),
            None => Err(GeometryError::UnknownId {
                kind: "node",
                index: id.0,
            }),
        }
    }

    fn check_instance(&self, id: InstanceId) -> Result<(), GeometryError> {
        match self.instances.get(id.0 as usize) {
            Some(_) => Ok(()),
            None => Err(GeometryError::UnknownId {
                kind: "instance",
                index: id.0,
            }),
        }
    }
}
