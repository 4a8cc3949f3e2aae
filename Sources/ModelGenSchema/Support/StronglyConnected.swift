/// Tarjan's algorithm, deterministic and iterative (no recursion, whatever the graph's depth):
/// components come in topological order (sources first), nodes inside a component in the given order.
/// Every edge's ends must be among `nodes`; the work is linear in nodes plus edges.
package enum StronglyConnected {
    package static func components(nodes: [String], edges: [(String, String)]) -> [[String]] {
        let position = Dictionary(nodes.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var successors = [[Int]](repeating: [], count: nodes.count)
        for (from, to) in edges {
            guard let from = position[from], let to = position[to] else { continue }
            successors[from].append(to)
        }
        let unvisited = -1
        var counter = 0
        var indices = [Int](repeating: unvisited, count: nodes.count), lowLinks = indices
        var stack: [Int] = [], onStack = [Bool](repeating: false, count: nodes.count)
        var result: [[String]] = []
        func visit(_ node: Int) {
            indices[node] = counter
            lowLinks[node] = counter
            counter += 1
            stack.append(node)
            onStack[node] = true
        }
        for root in nodes.indices where indices[root] == unvisited {
            var work: [(node: Int, next: Int)] = [(root, 0)]
            visit(root)
            while let (node, next) = work.last {
                if next < successors[node].count {
                    work[work.count - 1].next += 1
                    let target = successors[node][next]
                    if indices[target] == unvisited {
                        visit(target)
                        work.append((target, 0))
                    } else if onStack[target] {
                        lowLinks[node] = min(lowLinks[node], indices[target])
                    }
                    continue
                }
                work.removeLast()
                if let parent = work.last?.node {
                    lowLinks[parent] = min(lowLinks[parent], lowLinks[node])
                }
                if lowLinks[node] == indices[node] {
                    var component: [Int] = []
                    while let top = stack.popLast() {
                        onStack[top] = false
                        component.append(top)
                        if top == node { break }
                    }
                    result.append(component.sorted().map { nodes[$0] })
                }
            }
        }
        return result.reversed()
    }
}
